"""``acplab test``: the model's clients drive a real agent over stdio; ``trace check``'s monitors judge each run.

Layer: above ``trace`` (the judge) and ``render`` (the diagrams), below ``app`` (the command).
"""
