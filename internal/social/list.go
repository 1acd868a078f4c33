package social

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
)

// ListKey is one page of one list of one parent object, the key the list
// loader batches and caches by: two fields asking for the same page of the
// same parent's list share one read.
type ListKey struct {
	List   List
	Parent string
	// With is commonFollowing's other user; empty for the other lists.
	With string
	Page PageRequest
}

// ListPage is a page of a list: user ids, or, for ListComments, the
// comments themselves.
type ListPage struct {
	Users    Connection[string]
	Comments Connection[*Comment]
}

// UserPageKey is one page of a user's own posts with what the query wants
// along with them: the key the user-pages loader batches by.
type UserPageKey struct {
	User  string
	Page  PageRequest
	Wants PageWants
}
