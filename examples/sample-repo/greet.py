"""Greetings for the drydock demo."""


def greet(name):
    """Return a friendly greeting for name."""
    return "Hello " + name
