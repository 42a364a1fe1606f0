"""Pure rows and figures for what the CLI shows: no printing here (the CLI prints).

``evidence`` holds the evidence rows of ``advisor show``; ``tables`` the rows of ``show``,
``plugins`` and ``facts``; ``verify`` the rows of ``advisor verify``.
"""
