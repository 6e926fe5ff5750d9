"""cleveragents-hello: the smallest complete CleverAgents plugin.

It adds the context strategy ``hello-keyword`` and the command
``cleveragents hello [NAME]``. Read :mod:`cleveragents_hello.plugin` first.
"""

__version__ = "0.1.0"
