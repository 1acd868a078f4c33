package redisstore

// The keys of moderation (moderation.go): reports and suspensions, all in
// the {mod} slot, so a report's scripts touch one slot.

// ReportSeq is the INCR counter that hands out report ids.
func (k Keys) ReportSeq() string { return k.prefix + "{mod}:seq:report" }

// Report is one report's hash (reportRecord).
func (k Keys) Report(id string) string { return k.prefix + "{mod}:r:" + id }

// ReportsOpen is the zset of open report ids, scored by the id: the
// moderators' queue, oldest first.
func (k Keys) ReportsOpen() string { return k.prefix + "{mod}:open" }

// ReportsResolved is the zset of resolved report ids, scored by the id;
// it keeps the newest maxResolvedReports (older ones go with their
// hashes).
func (k Keys) ReportsResolved() string { return k.prefix + "{mod}:resolved" }

// ReportDedupe maps "<reporter>:<kind>:<target>" to the id of that
// reporter's open report of that target (hash), so a second report of
// it is the same report.
func (k Keys) ReportDedupe() string { return k.prefix + "{mod}:dedupe" }

// ReportsOpenBy counts each reporter's open reports (hash: reporter →
// count), which ModerationConfig.MaxOpenPerReporter bounds.
func (k Keys) ReportsOpenBy() string { return k.prefix + "{mod}:openby" }

// legacySuspended is the set of suspended user ids an earlier version
// kept; MigrateAuthorFlags moves it into AuthorFlags.
func (k Keys) legacySuspended() string { return k.prefix + "{hidden}:suspended" }

// AuthorFlags is the hash of the accounts whose posts readers may not see
// as anyone else's (authorflags.go): user id → its flag letters (l
// locked, s suspended, d deleted and being purged). A visibility check
// reads the fields of its batch's authors with one HMGET, so its cost
// follows the batch, not how many accounts are flagged. In Deleting's
// slot, so a purge's two marks are set by one script.
func (k Keys) AuthorFlags() string { return k.prefix + "{hidden}:flags" }
