package redisstore

// The keys of data exports (dataexport.go), beside keys.go, which builds
// every other key: the export record in the user's slot, the export
// queue, and the per-user indexes of likes and comments an export reads.

// Export is u's latest data export: the export record (exportRecord).
func (k Keys) Export(u string) string { return k.userKey(u, ":export") }

// ExportQueue is the stream of data exports to prepare, read by the
// export workers (internal/export) on the fan-out queue's code.
func (k Keys) ExportQueue() string { return k.prefix + "{export}:jobs" }

// ExportDead is ExportQueue's dead-letter stream.
func (k Keys) ExportDead() string { return k.prefix + "{export}:dead" }

// ExportAlive prefixes the liveness keys of ExportQueue's workers.
func (k Keys) ExportAlive() string { return k.prefix + "{export}:alive:" }
