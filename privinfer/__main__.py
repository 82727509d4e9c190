"""``python -m privinfer``: the ``privinfer`` console script (see :mod:`privinfer.cli`).

It works where the console script is not on the ``PATH`` (a ``pip install --user``, a
virtual environment that is not activated).
"""

import sys

from privinfer.cli import main

if __name__ == "__main__":
    sys.exit(main())
