"""TRL integration: rollouts through the environments, the curriculum sampler, reward functions."""
