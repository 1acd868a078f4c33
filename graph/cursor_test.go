package graph_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/social"
)

// TestCursorWalkOfOutsider: a signed-in viewer outside the audience of
// every post of a user (only ONLY_TO posts, more than a page's reads and
// read budget get through) gets exactly what an anonymous reader gets, on
// userTimeline and user.posts: no post, hasNextPage false, no cursor. A
// viewer in the audience pages them with cursors that show no post id, a
// tampered cursor is BAD_USER_INPUT, and a cursor of the unsealed form
// still works.
func TestCursorWalkOfOutsider(t *testing.T) {
	s := gatewaytest.New(t)
	ctx := context.Background()
	author, outsider, audience := s.Register(t, "hides"), s.Register(t, "outside"), s.Register(t, "inside")
	const n = 2500
	var ids []string
	for i := range n {
		p, err := s.Store.CreatePost(ctx, author.ID, social.NewPost{Content: fmt.Sprint("only for one ", i), OnlyTo: []string{audience.ID}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	for _, doc := range []string{feedUserDoc, feedUserPostsDoc} {
		vars := map[string]any{"u": author.ID, "first": 20}
		anonymous := s.MustDo(t, "", doc, vars).Data
		got := s.MustDo(t, outsider.Token, doc, vars).Data
		if !reflect.DeepEqual(got, anonymous) {
			t.Errorf("the outsider got %v\nthe anonymous reader %v", got, anonymous)
		}
		if !strings.Contains(fmt.Sprint(anonymous), "hasNextPage:false") {
			t.Errorf("the anonymous reader got %v, want an empty last page", anonymous)
		}
	}

	// The audience pages on with sealed cursors.
	vars := map[string]any{"u": author.ID, "first": 3}
	page := s.MustDo(t, audience.Token, feedUserDoc, vars)
	end := page.Str("userTimeline.pageInfo.endCursor")
	last := ids[n-3]
	if page.Get("userTimeline.pageInfo.hasNextPage") != true || page.Str("userTimeline.edges.2.node.id") != last {
		t.Fatalf("the audience's first page: %v", page.Data)
	}
	if strings.Contains(end, base64.RawURLEncoding.EncodeToString([]byte("v1:"+last))) || strings.Contains(end, last) {
		t.Errorf("cursor %q shows the post id %s", end, last)
	}
	vars["after"] = end
	if next := s.MustDo(t, audience.Token, feedUserDoc, vars); next.Str("userTimeline.edges.0.node.id") != ids[n-4] {
		t.Errorf("the page after the cursor: %v", next.Data)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(end)
	for i := range raw {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x40
		vars["after"] = base64.RawURLEncoding.EncodeToString(b)
		wantCode(t, s.Do(t, audience.Token, feedUserDoc, vars), "BAD_USER_INPUT")
	}
	vars["after"] = base64.RawURLEncoding.EncodeToString([]byte("v1:" + last))
	if next := s.MustDo(t, audience.Token, feedUserDoc, vars); next.Str("userTimeline.edges.0.node.id") != ids[n-4] {
		t.Errorf("the page after an unsealed cursor: %v", next.Data)
	}
}
