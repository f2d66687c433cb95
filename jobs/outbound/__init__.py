"""Requests that leave the scheduler: the address rules (`rules`), HTTP to vetted
addresses within a deadline (`http`) and Standard Webhooks signatures (`signing`).
"""
