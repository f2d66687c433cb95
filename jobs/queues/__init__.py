"""Queues: names and limits as the operator wrote them (`settings`), their system
checks (`checks`) and each queue's waiting and running runs (`status`).
"""
