package social

import "time"

// Editing a post and answering a comment: the rules the store applies
// before it writes.

// MaxEdits bounds the earlier versions a post keeps: an edit beyond it
// drops the oldest.
const MaxEdits = 50

// PostEdit is an earlier version of a post, replaced by an edit at
// ReplacedAt.
type PostEdit struct {
	Content     string
	SpoilerText *string
	Sensitive   bool
	ReplacedAt  time.Time
}

// EditPost is the input of an edit: what an edit may change. The
// audience, the files and the original of a repost stay.
type EditPost struct {
	Content     string
	SpoilerText string // "" for none
	Sensitive   bool
}

// CheckedEdit is an EditPost whose input passed CheckEdit.
type CheckedEdit struct {
	Content   string
	Spoiler   *string
	Sensitive bool
}

// CheckEdit applies the rules of a new post's content and spoiler text
// to an edit.
func CheckEdit(in EditPost) (CheckedEdit, error) {
	content, err := ValidatePostContent(in.Content)
	if err != nil {
		return CheckedEdit{}, err
	}
	spoiler, err := CleanText(in.SpoilerText, "a spoiler text", 0, MaxSpoilerLen)
	if err != nil {
		return CheckedEdit{}, err
	}
	return CheckedEdit{Content: content, Spoiler: optional(spoiler), Sensitive: in.Sensitive}, nil
}

// MayEdit reports why viewerID may not edit p (nil when they may): only
// its author edits a post, and a plain repost has no content of its own
// to edit (an edit would make it a quote).
func MayEdit(viewerID string, p *Post) error {
	if p.AuthorID != viewerID {
		return Errorf(Forbidden, "only its author may edit a post")
	}
	if p.Plain() {
		return Errorf(BadUserInput, "a plain repost has no content to edit")
	}
	return nil
}
