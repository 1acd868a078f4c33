package social

// Marks are what the viewer has done to a post.
type Marks struct {
	Liked bool
	// Reposted: the viewer has a plain repost of the post.
	Reposted bool
	// Bookmarked: the viewer bookmarked the post.
	Bookmarked bool
}
