package social

// StoredFile is a stored media file as its key records it, so that a
// sweeper can tell whether a post names it without a record elsewhere:
// the author of the post it was stored for, and the post sequence's
// value before that post's id was taken (the post's id is above it).
type StoredFile struct {
	Key    string
	Author string
	Seq    int64
}

// FileOwner is what a look at the posts says of a stored file.
type FileOwner int

const (
	// FileNamed: a post of its author names it.
	FileNamed FileOwner = iota
	// FileOrphan: no post of its author made after Seq names it; the
	// post it was stored for was never made, or is gone.
	FileOrphan
	// FileUndecided: its author made more posts since Seq than were
	// looked at; the file is kept.
	FileUndecided
)
