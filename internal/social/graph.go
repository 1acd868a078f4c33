package social

// UserCounts are the counters shown on a profile.
type UserCounts struct {
	Followers, Following, Posts int
	// PublicPosts are the posts everyone may see, what other viewers are
	// shown as postsCount (PostsCountFor).
	PublicPosts int
}

// SeesGraphOf reports whether the viewer may see whom a user follows and
// who follows them: not when that user blocked the viewer (a block hides
// the blocker's circle from the blocked, who could otherwise watch it).
func SeesGraphOf(self bool, r Relation) bool { return self || !r.BlockedViewer }

// PostsCountFor is a user's postsCount as the viewer may see it: all of
// them for the author; for anyone else only the public ones, so the count
// does not reveal posts whose audience excludes the viewer (posts
// addressed to the viewer with ONLY_TO are not counted either: counting
// them would cost reading every post's audience); none when a block stands
// between them, as the posts themselves are hidden then.
func PostsCountFor(c UserCounts, self bool, r Relation) int {
	switch {
	case self:
		return c.Posts
	case r.ViewerBlocked || r.BlockedViewer:
		return 0
	}
	return c.PublicPosts
}

// Relation is how the viewer and another user stand to each other.
type Relation struct {
	ViewerFollows bool // the viewer follows the user
	FollowsViewer bool // the user follows the viewer
	ViewerBlocked bool // the viewer blocked the user
	BlockedViewer bool // the user blocked the viewer
	ViewerMuted   bool // the viewer muted the user
	// ViewerRequested: the viewer asked to follow the user (a locked
	// account) and waits for approval.
	ViewerRequested bool
}

// PostCounts are the counters of a post.
type PostCounts struct {
	Likes, Comments, Reposts int
}

// NewPost is the input of createPost after GraphQL decoding.
type NewPost struct {
	Content  string
	RepostOf string
	OnlyTo   []string
	NotTo    []string
	Location *Location
	Source   string
	// Media are the files, already checked and stored, in the order
	// given.
	Media []Media
	// SpoilerText is a content warning ("" for none); Sensitive marks the
	// media sensitive.
	SpoilerText string
	Sensitive   bool
}

// Audience is a post's audience list, shown to its author only.
type Audience struct {
	OnlyTo []string
	NotTo  []string
}

// FollowPair asks whether Follower follows Followee.
type FollowPair struct{ Follower, Followee string }
