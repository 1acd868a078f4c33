package social

// UserCounts are the counters shown on a profile.
type UserCounts struct {
	Followers, Following, Posts int
}

// Relation is how the viewer and another user stand to each other.
type Relation struct {
	ViewerFollows bool // the viewer follows the user
	FollowsViewer bool // the user follows the viewer
	ViewerBlocked bool // the viewer blocked the user
	BlockedViewer bool // the user blocked the viewer
	ViewerMuted   bool // the viewer muted the user
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
}

// Audience is a post's audience list, shown to its author only.
type Audience struct {
	OnlyTo []string
	NotTo  []string
}

// UserWants says what to load for a list of users.
type UserWants struct {
	Profiles, Counts, Relations bool
}

// UserDetails holds what UserWants asked for, index by index with the ids
// asked about (nil slices for what was not asked).
type UserDetails struct {
	Users     []*User
	Counts    []UserCounts
	Relations []Relation
}
