"""The upstream transports: one client over our stdin/stdout, or Streamable HTTP on 127.0.0.1 behind
the local guard (Host, Origin, bearer token)."""
