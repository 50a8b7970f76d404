"""The one exception type for bad user input: the command line prints it as one line, exit 2."""


class InputError(ValueError):
    """Bad input from the user: a flag value, a file, a line.  The message says what and where."""
