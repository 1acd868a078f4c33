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

// Suspended is the set of suspended user ids, read with every visibility
// check of posts (post_read.go); the profile's susp field says the same
// for reads of the user.
func (k Keys) Suspended() string { return k.prefix + "{hidden}:suspended" }
