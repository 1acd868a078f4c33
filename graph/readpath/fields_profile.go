package readpath

import (
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/social"
)

// The profile's display name and pictures: read with the profile (the
// HMGET a page sends for its authors), rendered by the resolvers and by
// the fast path through the functions below.

// PictureURLs gives the address of a copy of a profile picture
// (httpapi.MediaAddresses, whose handler serves it).
type PictureURLs interface {
	ProfileURL(userID, imageID string, size int) string
}

// DisplayName is a user's display name; none reads null.
func DisplayName(u *social.User) (string, bool) { return u.DisplayName, u.DisplayName != "" }

// Picture is the copy of a profile picture a field's size argument asks
// for (social.ProfileImage.Version; null or at most 0: the largest), as
// the schema shows it; nil for no picture. Each copy has an id of its
// own, so a client's cache keeps the copies apart.
func Picture(urls PictureURLs, userID string, img *social.ProfileImage, size *int) *model.Media {
	if img == nil {
		return nil
	}
	want := 0
	if size != nil {
		want = *size
	}
	v := img.Version(want)
	w, h := v.Width, v.Height
	return &model.Media{ID: img.ID + "-" + strconv.Itoa(v.Size), Kind: model.MediaKindImage,
		URL: urls.ProfileURL(userID, img.ID, v.Size), MimeType: v.MIME, Bytes: int(v.Bytes), Width: &w, Height: &h}
}

// pictureRule is the rule of User.avatar or User.header, whose picture
// is at: read with the profile; rendered with its size argument.
func pictureRule(at func(u *social.User) *social.ProfileImage) fieldRule {
	return fieldRule{args: []string{"size"},
		render: render[*social.User](func(fr *fastRenderer, f graphql.CollectedField, u *social.User) bool {
			size, ok := optionalInt(f.ArgumentMap(fr.oc.Variables)["size"])
			if !ok {
				return false
			}
			m := Picture(fr.pictures, u.ID, at(u), size)
			if m == nil {
				fr.null()
				return true
			}
			return renderObject(fr, f.Selections, "Media", m)
		})}
}

// mediaRules are the rules of Media, rendered for profile pictures (a
// post's media are left to the ordinary path: Post.media has no render).
func mediaRules() map[string]fieldRule {
	optInt := func(get func(m *model.Media) *int) render[*model.Media] {
		return func(fr *fastRenderer, _ graphql.CollectedField, m *model.Media) bool {
			if p := get(m); p != nil {
				fr.int(*p)
			} else {
				fr.null()
			}
			return true
		}
	}
	return map[string]fieldRule{
		"id":       {render: str(func(m *model.Media) string { return m.ID })},
		"kind":     {render: str(func(m *model.Media) string { return string(m.Kind) })},
		"url":      {render: str(func(m *model.Media) string { return m.URL })},
		"mimeType": {render: str(func(m *model.Media) string { return m.MimeType })},
		"bytes":    {render: scalar(func(m *model.Media) int { return m.Bytes }, (*fastRenderer).int)},
		"width":    {render: optInt(func(m *model.Media) *int { return m.Width })},
		"height":   {render: optInt(func(m *model.Media) *int { return m.Height })},
		// A picture has neither.
		"duration": {render: render[*model.Media](func(fr *fastRenderer, _ graphql.CollectedField, m *model.Media) bool {
			if m.Duration != nil {
				return false
			}
			fr.null()
			return true
		})},
		"alt": {render: nullable(func(m *model.Media) (string, bool) {
			if m.Alt == nil {
				return "", false
			}
			return *m.Alt, true
		})},
	}
}
