package social

import (
	"fmt"
	"math"
	"slices"
)

// The rules every adapter applies the same way: what a valid post, comment
// and page request are, and who may see a post. They are plain functions so
// that the Redis store, the GraphQL layer and the tests share one copy.

// Limits of user-written content, in characters (Unicode code points)
// after trimming; MaxAudienceSize bounds onlyTo and notTo.
const (
	MaxPostLen      = 500
	MaxCommentLen   = 1000
	MaxAudienceSize = 1000
	MaxPlaceLen     = 100  // a location's name
	MaxSourceLen    = 40   // a post's source (the client's name)
	MaxAltLen       = 1000 // a media file's text alternative
	MaxSpoilerLen   = 200  // a post's spoiler text (content warning)
)

// ValidateMediaAlt cleans the text alternative of an attached file (""
// when there is none).
func ValidateMediaAlt(alt string) (string, error) {
	return CleanText(alt, "a media alt text", 0, MaxAltLen)
}

// ValidateMedia cleans the alt texts of a new post's files.
func ValidateMedia(files []Media) ([]Media, error) {
	if len(files) == 0 {
		return nil, nil
	}
	out := make([]Media, len(files))
	for i, m := range files {
		alt, err := ValidateMediaAlt(m.Alt)
		if err != nil {
			return nil, err
		}
		m.Alt = alt
		out[i] = m
	}
	return out, nil
}

// ValidateMediaCount checks how many files a post carries against the
// configured maximum.
func ValidateMediaCount(n, max int) error {
	if n > max {
		return Errorf(BadUserInput, "a post carries at most %d media files, not %d", max, n)
	}
	return nil
}

// ValidatePostContent trims a post's content and checks its length.
func ValidatePostContent(content string) (string, error) {
	return CleanText(content, "a post", 1, MaxPostLen)
}

// ValidateComment trims a comment and checks its length.
func ValidateComment(content string) (string, error) {
	return CleanText(content, "a comment", 1, MaxCommentLen)
}

// ValidateNewPost checks a new post: its content (empty for a plain
// repost, which is one with repostOf and no content), and its audience
// (see ValidateAudience). A repost takes no audience of its own: it is
// seen by exactly those who may see its original (RepostAudience), so it
// can never show the original, or count toward its repostsCount, for
// anyone the original is hidden from.
func ValidateNewPost(in NewPost) (content string, vis Visibility, audience []string, err error) {
	if in.RepostOf != "" {
		if in.OnlyTo != nil || in.NotTo != nil {
			return "", "", nil, Errorf(BadUserInput, "a repost has the audience of its original: onlyTo and notTo cannot be set")
		}
		if in.Content == "" {
			return "", Public, nil, nil
		}
	}
	if content, err = ValidatePostContent(in.Content); err != nil {
		return "", "", nil, err
	}
	vis, audience, err = ValidateAudience(in)
	return content, vis, audience, err
}

// CheckedPost is a new post whose input passed CheckNewPost: its
// content, audience, location, source and files cleaned.
type CheckedPost struct {
	Content    string
	Visibility Visibility
	Audience   []string
	RepostOf   string
	Location   *Location
	Source     string
	Media      []Media
	Spoiler    *string
	Sensitive  bool
}

// Plain reports a plain repost: one with an original and no content.
func (p CheckedPost) Plain() bool { return p.RepostOf != "" && p.Content == "" }

// CheckNewPost applies every rule of a new post's input: its content and
// audience (ValidateNewPost), its location and source
// (ValidatePostExtras), its files' alt texts (ValidateMedia), and the
// form of the original's id (an id that cannot exist is NOT_FOUND, as a
// missing post).
func CheckNewPost(in NewPost) (CheckedPost, error) {
	content, vis, audience, err := ValidateNewPost(in)
	if err != nil {
		return CheckedPost{}, err
	}
	loc, source, err := ValidatePostExtras(in.Location, in.Source)
	if err != nil {
		return CheckedPost{}, err
	}
	files, err := ValidateMedia(in.Media)
	if err != nil {
		return CheckedPost{}, err
	}
	spoiler, err := CleanText(in.SpoilerText, "a spoiler text", 0, MaxSpoilerLen)
	if err != nil {
		return CheckedPost{}, err
	}
	if in.RepostOf != "" && !IsID(in.RepostOf) {
		return CheckedPost{}, Errorf(NotFound, "post %s not found", in.RepostOf)
	}
	return CheckedPost{Content: content, Visibility: vis, Audience: audience, RepostOf: in.RepostOf,
		Location: loc, Source: source, Media: files, Spoiler: optional(spoiler), Sensitive: in.Sensitive}, nil
}

// optional is s, nil when empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ValidatePostExtras checks and cleans where a post says it was made from
// and with which client.
func ValidatePostExtras(loc *Location, source string) (*Location, string, error) {
	if loc != nil {
		if math.IsNaN(loc.Latitude) || loc.Latitude < -90 || loc.Latitude > 90 ||
			math.IsNaN(loc.Longitude) || loc.Longitude < -180 || loc.Longitude > 180 {
			return nil, "", Errorf(BadUserInput, "a location has a latitude from -90 to 90 and a longitude from -180 to 180")
		}
		name, err := CleanText(loc.Name, "a location name", 0, MaxPlaceLen)
		if err != nil {
			return nil, "", err
		}
		loc = &Location{Latitude: loc.Latitude, Longitude: loc.Longitude, Name: name}
	}
	source, err := CleanText(source, "a source", 0, MaxSourceLen)
	if err != nil {
		return nil, "", err
	}
	return loc, source, nil
}

// RepostAudience is the audience of a repost by reposter of a post with
// visibility vis, audience list list, by author: the original's, with its
// author added to an ONLY_TO list (the original's author may see it, and
// so every repost of it). Blocks are checked at read time, per post.
func RepostAudience(vis Visibility, list []string, author string) []string {
	if vis != OnlyTo || slices.Contains(list, author) {
		return list
	}
	return append(slices.Clip(list), author)
}

// ValidateAudience returns a post's visibility and its audience list
// (deduplicated, in the order given). onlyTo and notTo exclude each other;
// an empty onlyTo is refused (it would be a post nobody but its author
// sees, most likely a mistake), an empty notTo means PUBLIC. Whether the
// listed users exist is the store's to check.
func ValidateAudience(in NewPost) (Visibility, []string, error) {
	if in.OnlyTo != nil && in.NotTo != nil {
		return "", nil, Errorf(BadUserInput, "onlyTo and notTo cannot be used together")
	}
	vis, list := Public, in.NotTo
	if in.OnlyTo != nil {
		if len(in.OnlyTo) == 0 {
			return "", nil, Errorf(BadUserInput, "onlyTo must name at least one user")
		}
		vis, list = OnlyTo, in.OnlyTo
	} else if len(in.NotTo) > 0 {
		vis = NotTo
	}
	if len(list) > MaxAudienceSize {
		return "", nil, Errorf(BadUserInput, "an audience list holds at most %d users", MaxAudienceSize)
	}
	out := make([]string, 0, len(list))
	seen := make(map[string]bool, len(list))
	for _, id := range list {
		if !IsID(id) {
			return "", nil, Errorf(BadUserInput, "unknown user %q in the audience", id)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return vis, out, nil
}

// ValidateFirst checks the page size of a connection.
func ValidateFirst(first int) error {
	if first < 1 || first > MaxFirst {
		return Errorf(BadUserInput, "first must be between 1 and %d", MaxFirst)
	}
	return nil
}

// IsID reports whether s has the form of an id: a positive decimal without
// leading zeros that fits an int64 (ids are handed out by a counter).
// Anything else names nothing, and adapters never splice it into a key.
func IsID(s string) bool {
	if s == "" || len(s) > 19 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) < 19 || s <= "9223372036854775807"
}

// Access says whether a viewer may see a post, and if not, why.
type Access int

// The answers of PostAccess.
const (
	Visible Access = iota
	Missing        // no such post, or deleted
	Hidden         // the audience excludes the viewer
	Blocked        // the author blocked the viewer, or the other way round
)

func (a Access) String() string {
	switch a {
	case Visible:
		return "visible"
	case Missing:
		return "missing"
	case Hidden:
		return "hidden"
	case Blocked:
		return "blocked"
	}
	return fmt.Sprintf("Access(%d)", int(a))
}

// AccessFacts are what the visibility policy needs to know about a viewer
// and one post besides the post itself; an adapter reads them in bulk.
type AccessFacts struct {
	// Blocked: a block stands between the viewer and the author, either way.
	Blocked bool
	// InOnlyTo, InNotTo: the viewer is in the post's onlyTo / notTo list.
	InOnlyTo, InNotTo bool
	// AuthorSuspended: a moderator suspended the post's author.
	AuthorSuspended bool
	// AuthorLocked: the author is a locked account (User.Locked), whose
	// posts only its followers see; FollowsAuthor: the viewer follows the
	// author. The lock is the author's, read with the author at read
	// time, so locking or unlocking an account applies to all its posts
	// at once, the older ones too.
	AuthorLocked, FollowsAuthor bool
}

// PostAccess is the visibility policy: whether viewerID ("" when
// anonymous) may see p (nil when it does not exist). Authors always see
// their own posts. Anonymous viewers see PUBLIC posts only: a NOT_TO post
// is hidden from the users it lists, and a reader who drops their token
// must not become someone it does not list. A suspended author's posts
// are missing to everyone else until the suspension is lifted. A signed-in viewer sees
// nothing of an author on the other side of a block, ONLY_TO posts only
// when listed, NOT_TO posts unless listed. A locked account's posts are
// seen by its followers only, whatever their audience: anonymous viewers
// follow no one.
func PostAccess(viewerID string, p *Post, f AccessFacts) Access {
	switch {
	case p == nil:
		return Missing
	case p.AuthorID == viewerID:
		return Visible
	case f.AuthorSuspended:
		return Missing
	case f.AuthorLocked && (viewerID == "" || !f.FollowsAuthor):
		return Hidden
	case viewerID == "":
		if p.Visibility != Public {
			return Hidden
		}
		return Visible
	case f.Blocked:
		return Blocked
	case p.Visibility == OnlyTo && !f.InOnlyTo:
		return Hidden
	case p.Visibility == NotTo && f.InNotTo:
		return Hidden
	}
	return Visible
}

// WithoutCommentsOf leaves out of a page of comments (or of answers)
// those whose author is hidden from the viewer (hidden: a block either
// way), as their posts are. A page that loses any keeps its place: End is
// the cursor of the last comment read, so the next page starts past the
// ones left out, and HasNext stays as the read found it. Counts stay:
// commentsCount is the post's, not the viewer's.
func WithoutCommentsOf(c Connection[*Comment], hidden func(author string) bool) Connection[*Comment] {
	if hidden == nil {
		return c
	}
	keep := 0
	for _, cm := range c.Items {
		if !hidden(cm.AuthorID) {
			keep++
		}
	}
	if keep == len(c.Items) {
		return c
	}
	out := c
	out.Items, out.Cursors = make([]*Comment, 0, keep), make([]string, 0, keep)
	if c.HasNext {
		out.End = c.EndCursor()
	}
	for i, cm := range c.Items {
		if !hidden(cm.AuthorID) {
			out.Items, out.Cursors = append(out.Items, cm), append(out.Cursors, c.Cursors[i])
		}
	}
	return out
}
