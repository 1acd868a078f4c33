package gateway

import (
	"net/http"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/redisstore"
)

// Compile-time checks of what profile editing is wired with (New).
var (
	_ graph.ProfileStore   = (*redisstore.ProfileService)(nil)
	_ graph.PictureFiles   = (*mediastore.Store)(nil)
	_ readpath.PictureURLs = (*httpapi.MediaAddresses)(nil)
	_ httpapi.ProfileUsers = (*redisstore.AccountService)(nil)
)

// wireProfiles gives the resolvers the profile editor, which stores
// pictures in files (nil: none taken) with the posts' files' bounds and
// saving slots, and returns the /media/ handler that serves profile
// pictures besides posts' files.
func (g *Gateway) wireProfiles(store *redisstore.Store, files *mediastore.Store, posts http.Handler) http.Handler {
	e := &graph.ProfileEditor{Store: redisstore.NewProfileService(store.DB), URLs: g.MediaAddresses,
		Budget: g.Limiter, Saving: g.Resolver.Attachments.Saving}
	var served httpapi.MediaFiles // nil: none served
	if files != nil {
		e.Files, served = files, files
	}
	g.Resolver.Profile = e
	return httpapi.WithProfilePictures(posts, served, store.AccountService)
}
