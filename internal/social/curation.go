package social

// Curation: what a user keeps of what they read, privately (bookmarks) or
// on their profile (pinned posts), and lists of the users they follow
// whose posts make a timeline of their own.

// The bounds of curation.
const (
	MaxPins        = 5   // pinned posts a user
	MaxLists       = 100 // lists a user
	MaxListMembers = 500 // members of a list
	MaxListTitle   = 100 // characters of a list's title
)

// List is one of a user's lists; only its owner sees it.
type List struct {
	ID      string
	OwnerID string
	Title   string
}

// ValidateListTitle cleans a list's title: the rules of content, 1 to
// MaxListTitle characters.
func ValidateListTitle(title string) (string, error) {
	return CleanText(title, "a list title", 1, MaxListTitle)
}

// ValidateListMembers checks the users of an addToList or removeFromList:
// at least one, each an id, none twice, and no more than a list holds.
// The answer keeps their order.
func ValidateListMembers(ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, Errorf(BadUserInput, "userIds is empty")
	}
	if len(ids) > MaxListMembers {
		return nil, Errorf(BadUserInput, "at most %d users at once", MaxListMembers)
	}
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !IsID(id) {
			return nil, Errorf(NotFound, "user %s not found", id)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// CheckPinnable tells whether viewerID may pin p: their own post, and not
// a plain repost of someone else's post (a boost shows another user's
// words; Mastodon refuses to pin one too). A repost with content of its
// own is the author's words and may be pinned.
func CheckPinnable(viewerID string, p *Post) error {
	if p.AuthorID != viewerID {
		return Errorf(Forbidden, "post %s is not yours to pin", p.ID)
	}
	if p.RepostOfID != "" && p.Content == "" && p.RepostOfAuthorID != viewerID {
		return Errorf(BadUserInput, "post %s is a repost of another user's post: only your own posts can be pinned", p.ID)
	}
	return nil
}

// TooManyPins is the error of a pin past MaxPins.
func TooManyPins() error {
	return Errorf(BadUserInput, "at most %d pinned posts: unpin one first", MaxPins)
}

// ListNotFound is the error of a list id that is not one of the viewer's
// lists (whether another user's or none): a list is its owner's only.
func ListNotFound(id string) error {
	return Errorf(NotFound, "list %s not found among your lists", id)
}

// TooManyMembers is the error of an addToList that would pass
// MaxListMembers.
func TooManyMembers(have, adding int) error {
	return Errorf(BadUserInput, "a list holds at most %d members: it has %d, and %d more would pass that", MaxListMembers, have, adding)
}

// NotFollowed is the error of an addToList of a user the owner does not
// follow.
func NotFollowed(userID string) error {
	return Errorf(BadUserInput, "user %s is not someone you follow: a list holds only users you follow", userID)
}

// TooManyLists is the error of a createList past MaxLists.
func TooManyLists() error {
	return Errorf(BadUserInput, "at most %d lists: delete one first", MaxLists)
}
