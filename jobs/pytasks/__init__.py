"""Python tasks: the registry and discovery of `@register` functions, their
signatures and argument binding, and what `@register(cron=...)` declared. Pure Python
below the models.
"""
