"""A plugin whose import fails, as a plugin with a missing dependency would.

``advisor plugins`` reports it with the error; every other plugin keeps working.
"""

import advisor_dependency_that_does_not_exist  # noqa: F401  (the point of this example)
