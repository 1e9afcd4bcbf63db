"""ACEBench's scenario worlds and evaluators.

``phone``, ``food`` and ``travel``: the scenario classes; ``world``: the multi-class world a task runs in;
``dataset``: reading the benchmark files; ``schemas``: function descriptions as tools;
``normal_check``, ``special_check``, ``agent_check``: the checkers in faithful and strict mode;
``verifiers``: their episode-level wrappers; ``scores``: per-category and overall scores.
"""
