package social

// PageWants says what a timeline page fetch should bring along with the
// posts, as read from the GraphQL selection: the store fetches exactly
// that, in a fixed number of pipelined round trips.
type PageWants struct {
	Authors  bool // the posts' authors
	Counts   bool // likes, comments and reposts counters
	Marks    bool // whether the viewer liked and reposted each post
	Comments int  // the first N comments of each post (0: none)
	// CommentAuthors loads the authors of those comments.
	CommentAuthors bool
	// Reposts loads the originals of reposts (as the viewer may see them).
	Reposts bool
	// Originals says what to bring along with the originals.
	OriginalAuthors, OriginalCounts, OriginalMarks bool
}

// Page is a timeline page with what PageWants asked for. Maps are keyed by
// post id (Counts, Marks, Comments) or user id (Users); a missing key was
// not asked for, except in Originals where a nil value means the original
// is deleted or hidden from the viewer.
type Page struct {
	Posts     Connection[*Post]
	Users     map[string]*User
	Counts    map[string]PostCounts
	Marks     map[string]Marks
	Comments  map[string]Connection[*Comment]
	Originals map[string]*Post
}

// Marks are what the viewer has done to a post.
type Marks struct {
	Liked bool
	// Reposted: the viewer has a plain repost of the post.
	Reposted bool
}
