"""The engine (config → supervisor → catalogue → router) and what surrounds one: `Control` (every change
to the config file), the advertisement `status` and `connect` read, one engine per user, and `host`
(serving an engine over HTTP as `serve` and the window both do). Importing this package loads nothing:
`connect` reads advertisements without the engine's heavier rooms."""
