package redisstore_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// TestReportScripts runs the filing and resolving of reports against
// Redis: one open report per reporter and target, the cap of open
// reports, the answers of a resolve, and the bound of resolved reports.
func TestReportScripts(t *testing.T) {
	defer redisstore.SetMaxResolvedReports(2)()
	s, _ := feedStore(t)
	ctx := context.Background()
	target := func(id string) social.ReportTarget {
		return social.ReportTarget{Kind: social.ReportUser, ID: id, Owner: id}
	}
	file := func(reporter, id string, max int) (*social.Report, bool, error) {
		t.Helper()
		return s.AddReport(ctx, reporter, target(id), "reason "+id, max)
	}
	first, created, err := file("1", "10", 3)
	if err != nil || !created || first.ID != "1" {
		t.Fatalf("first report: %+v %v %v", first, created, err)
	}
	steps := []struct {
		name     string
		reporter string
		target   string
		wantID   string
		created  bool
		code     social.Code
	}{
		{"the same target again", "1", "10", "1", false, ""},
		{"another reporter", "2", "10", "2", true, ""},
		{"another target", "1", "11", "3", true, ""},
		{"the third open report", "1", "12", "4", true, ""},
		{"past the cap", "1", "13", "", false, social.RateLimited},
		{"the same target past the cap is still the first", "1", "10", "1", false, ""},
	}
	for _, st := range steps {
		r, created, err := file(st.reporter, st.target, 3)
		if social.ErrorCode(err) != st.code {
			t.Fatalf("%s: error %v, want code %q", st.name, err, st.code)
		}
		if st.code != "" {
			continue
		}
		if r.ID != st.wantID || created != st.created || r.Reason != "reason "+st.target || r.Status != social.ReportOpen {
			t.Errorf("%s: %+v created %v, want id %s created %v", st.name, r, created, st.wantID, st.created)
		}
	}
	resolves := []struct {
		name, id string
		code     social.Code
	}{
		{"resolve", "1", ""},
		{"again", "1", social.Conflict},
		{"unknown", "99", social.NotFound},
		{"not an id", "x", social.NotFound},
		{"resolve another", "2", ""},
		{"a third, past the bound", "3", ""},
	}
	for _, r := range resolves {
		if err := s.CloseReport(ctx, r.id, social.Dismiss, "7"); social.ErrorCode(err) != r.code {
			t.Fatalf("%s: error %v, want code %q", r.name, err, r.code)
		}
	}
	// The oldest resolved report went, hash and all; the others are kept.
	if _, err := s.Report(ctx, "1"); !social.IsCode(err, social.NotFound) {
		t.Errorf("the oldest resolved report is still there: %v", err)
	}
	r, err := s.Report(ctx, "2")
	if err != nil || r.Status != social.ReportResolved || r.Action != social.Dismiss || r.Moderator != "7" || r.ResolvedAt == nil {
		t.Errorf("resolved report: %+v %v", r, err)
	}
	page, err := s.Reports(ctx, social.ReportResolved, social.PageRequest{First: 10})
	if err != nil || len(page.Items) != 2 || page.Items[0].ID != "2" || page.Items[1].ID != "3" {
		t.Errorf("resolved reports: %+v %v", page.Items, err)
	}
	// Resolving freed the reporter's place and the dedupe entry: the
	// same target makes a new report.
	r, created, err = file("1", "10", 3)
	if err != nil || !created || r.ID != "5" {
		t.Errorf("a report of the same target after a resolve: %+v %v %v", r, created, err)
	}
	// Open: 4 and 5, oldest first, a page each.
	open, err := s.Reports(ctx, social.ReportOpen, social.PageRequest{First: 1})
	if err != nil || len(open.Items) != 1 || open.Items[0].ID != "4" || !open.HasNext {
		t.Fatalf("open reports: %+v %v", open, err)
	}
	next, err := s.Reports(ctx, social.ReportOpen, social.PageRequest{First: 1, After: open.EndCursor()})
	if err != nil || len(next.Items) != 1 || next.Items[0].ID != "5" || next.HasNext {
		t.Errorf("the next page: %+v %v", next, err)
	}
	if _, err := s.Reports(ctx, social.ReportOpen, social.PageRequest{First: 2, After: strconv.Itoa(4)}); !social.IsCode(err, social.BadUserInput) {
		t.Errorf("a forged cursor: %v", err)
	}
}
