"""Optimizers (registered by name), learning-rate schedules, Adafactor and multistep
accumulation.
"""
