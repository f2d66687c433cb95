"""Who may do what: permission and group names (`permissions`) and which secret
values a user may see (`masking`).
"""
