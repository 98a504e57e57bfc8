"""The CLI's commands that do more than parse arguments: each one a module, called by ``connector.cli``.

The rest of the code never imports them: they sit at the top of the house, over the job, the worker
and the config checks they run.
"""
