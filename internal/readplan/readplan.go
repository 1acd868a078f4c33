// Package readplan holds what a read of the GraphQL layer asks the store
// for: which lists below objects to page (List, ListKey), and what a
// timeline page must bring along with its posts (PageWants). The GraphQL
// layer builds these from a query's selection, the loaders batch by them,
// and the store carries them out; the domain (internal/social) knows
// nothing of them.
package readplan

import "github.com/socialgw/gateway/internal/social"

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
	Posts     social.Connection[*social.Post]
	Users     map[string]*social.User
	Counts    map[string]social.PostCounts
	Marks     map[string]social.Marks
	Comments  map[string]social.Connection[*social.Comment]
	Originals map[string]*social.Post
}

// List names a connection field below an object whose pages the loaders
// batch: one batch reads the pages of every parent of a query level.
type List string

// The lists below objects.
const (
	ListFollowers       List = "followers"       // User.followers
	ListFollowing       List = "following"       // User.following
	ListCommonFollowing List = "commonFollowing" // User.commonFollowing (With is the other user)
	ListLikers          List = "likers"          // Post.likers
	ListComments        List = "comments"        // Post.comments
	ListReplies         List = "replies"         // Comment.replies (With is the comment's post)
	ListMembers         List = "members"         // List.members (Parent is "<owner>:<list id>")
	ListFollowRequests  List = "followRequests"  // Query.followRequests (Parent is the viewer)
)

// ListKey is one page of one list of one parent object, the key the list
// loader batches and caches by: two fields asking for the same page of the
// same parent's list share one read.
type ListKey struct {
	List   List
	Parent string
	// With is commonFollowing's other user, replies' post (whose slot
	// holds the comment's answers); empty for the other lists.
	With string
	Page social.PageRequest
}

// ListPage is a page of a list: user ids, or, for ListComments and
// ListReplies, the comments themselves.
type ListPage struct {
	Users    social.Connection[string]
	Comments social.Connection[*social.Comment]
}

// UserPageKey is one page of a user's own posts with what the query wants
// along with them: the key the user-pages loader batches by.
type UserPageKey struct {
	User  string
	Page  social.PageRequest
	Wants PageWants
}

// UserWants says what to load for a list of users.
type UserWants struct {
	Profiles, Counts, Relations bool
}

// UserDetails holds what UserWants asked for, index by index with the ids
// asked about (nil slices for what was not asked).
type UserDetails struct {
	Users     []*social.User
	Counts    []social.UserCounts
	Relations []social.Relation
}
