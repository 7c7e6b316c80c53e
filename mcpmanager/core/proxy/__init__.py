"""What clients talk to: the `Router` (resolve, record, route each call), one `ModeServer` per mode
(discovery, direct), the meta-tools and their behaviour, the activity log, token counts."""
