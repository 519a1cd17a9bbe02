"""The web server's routes, one module per concern, each a list ``ROUTES`` of module-level
handlers that :func:`fourhundred_web.app.create_app` mounts: :mod:`.pages` the page and what
it offers, :mod:`.tables` a Play table, :mod:`.watch` a results database, :mod:`.records` a
record file opened in Watch, :mod:`.analysis` a review and a hint. Every handler finds the
server's state with :func:`fourhundred_web.server.server`."""
