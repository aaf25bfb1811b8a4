"""memkeeper.core: the memory store library (plain functions and pydantic models).

Importing this package imports nothing else; import the module you need.
"""
