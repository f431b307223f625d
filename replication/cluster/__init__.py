"""The embedded cluster: region-server processes (write path, WAL roll/archive, queue registration,
memstore flush to table files), the gRPC sink service, the client, and dead-server recovery."""
