"""BFCL-v3 glue around the ``bfcl-eval`` package (used by ``envsched_gym.adapters.bfcl``).

Modules: ``data`` (where the data is, JSON Lines readers), ``schema`` (function docs -> OpenAI
tool schemas), ``literals`` (Java / JavaScript literal strings -> values), ``ast_checker``
(single-turn AST rules), ``backends`` (the multi-turn world over BFCL's executable backends),
``gold`` (ground truth as tool calls), ``verifiers`` (single- and multi-turn verdicts).
"""
