"""``python -m acplab``: the same command line as the ``acplab`` script."""

from acplab.model.app.cli import main

if __name__ == "__main__":
    main()
