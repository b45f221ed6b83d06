"""Adapters that put thresher's harness inside other projects' trainers.

Each adapter is optional and imported by nothing in the core: :mod:`thresher.integrations.trl`
for TRL's ``GRPOTrainer`` (see ``docs/rl.md``). No adapter imports its trainer at module level,
so importing one needs neither torch nor the trainer installed.
"""
