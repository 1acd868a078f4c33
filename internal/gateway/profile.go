package gateway

import (
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
