"""The bundled configs (``*.yaml``), installed as the package ``fourhundred_env.bundled_configs``
(see pyproject.toml) so that they are found by name from anywhere: ``fourhundred train tiny``,
``fourhundred tournament --config default``. See :func:`fourhundred_env.configs.config_path`."""
