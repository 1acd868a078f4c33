package social

import "time"

// ExportStatus is where a data export stands.
type ExportStatus string

// The states of a data export.
const (
	ExportPending ExportStatus = "PENDING"
	ExportReady   ExportStatus = "READY"
	ExportFailed  ExportStatus = "FAILED"
)

// DataExport is an account's archive of everything it holds: requested,
// then prepared by a queue worker, then served at a signed address until
// Until.
type DataExport struct {
	ID        string
	UserID    string
	Status    ExportStatus
	CreatedAt time.Time
	// Bytes is the archive's size once READY.
	Bytes int64
	// Until is when a READY archive stops being served.
	Until time.Time
	// URL is the archive's signed address, set for its owner when READY.
	URL string
}

// ExportPart names a set of an account's data that an export pages
// through.
type ExportPart string

// The parts an export pages through.
const (
	PartPosts     ExportPart = "posts"
	PartLikes     ExportPart = "likes"
	PartComments  ExportPart = "comments"
	PartFollowing ExportPart = "follows"
	PartFollowers ExportPart = "followers"
	PartBlocks    ExportPart = "blocks"
	PartMutes     ExportPart = "mutes"
	PartBookmarks ExportPart = "bookmarks"
)

// ExportEntry is one item of a part: an id, and when it was added (zero
// for parts that do not keep it: blocks, mutes).
type ExportEntry struct {
	ID string
	At time.Time
}

// ExportList is one of an account's lists with its members.
type ExportList struct {
	List
	Members []ExportEntry
}
