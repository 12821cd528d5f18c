package tablelog_test

import (
	"context"
	"net"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	tablelogv1 "github.com/tablelog/tablelog/clients/go/gen/tablelog/v1"
	"github.com/tablelog/tablelog/clients/go/tablelog"
)

// fakeStandings answers club memory's calls as a club with one table would.
type fakeStandings struct {
	tablelogv1.UnimplementedStandingsServiceServer
	asked []string
	auth  []string
}

func (f *fakeStandings) GetStandings(ctx context.Context, req *tablelogv1.GetStandingsRequest) (*tablelogv1.GetStandingsResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.auth = append(f.auth, md.Get("authorization")...)
	f.asked = append(f.asked, req.GetGame()+" "+req.GetSeason())
	return &tablelogv1.GetStandingsResponse{
		Game: req.GetGame(), Games: 3,
		Rows: []*tablelogv1.StandingRow{{DisplayName: "Ann", Games: 3, Wins: 1.5}},
		Lag:  &tablelogv1.ProjectionLag{ProjectedGames: 3},
	}, nil
}

func (f *fakeStandings) GetPlayerRecord(_ context.Context, req *tablelogv1.GetPlayerRecordRequest) (*tablelogv1.GetPlayerRecordResponse, error) {
	f.asked = append(f.asked, "player "+req.GetName()+" "+req.GetGame()+" "+req.GetSeason())
	return &tablelogv1.GetPlayerRecordResponse{
		Player: &tablelogv1.ClubPlayer{DisplayName: req.GetName()},
		Games:  []*tablelogv1.PlayerGameRecord{{Game: "splendor", RatingChartSvg: "<svg/>"}},
	}, nil
}

func (f *fakeStandings) GetGameTypeStats(_ context.Context, req *tablelogv1.GetGameTypeStatsRequest) (*tablelogv1.GetGameTypeStatsResponse, error) {
	f.asked = append(f.asked, "stats "+req.GetGame()+" "+req.GetSeason())
	return &tablelogv1.GetGameTypeStatsResponse{
		Game: req.GetGame(), Games: 3, AverageMoves: 41.5,
		Seats: []*tablelogv1.SeatStats{{Order: 1, Games: 3, Wins: 2}},
	}, nil
}

func TestStandingsCallsCarryTheTokenAndTheirArguments(t *testing.T) {
	listener := bufconn.Listen(1 << 20)
	server := grpc.NewServer()
	fake := &fakeStandings{}
	tablelogv1.RegisterStandingsServiceServer(server, fake)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return listener.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	client := tablelog.New(conn, tablelog.WithToken("tl_ada"))
	ctx := context.Background()
	table, err := client.GetStandings(ctx, "splendor", "2026")
	if err != nil || table.GetGames() != 3 || table.GetRows()[0].GetWins() != 1.5 || table.GetLag().GetProjectedGames() != 3 {
		t.Fatalf("standings %v %v", table, err)
	}
	record, err := client.PlayerRecord(ctx, "Ann", "", "2026")
	if err != nil || record.GetGames()[0].GetRatingChartSvg() != "<svg/>" {
		t.Fatalf("player %v %v", record, err)
	}
	stats, err := client.GameTypeStats(ctx, "splendor", "")
	if err != nil || stats.GetSeats()[0].GetWins() != 2 || stats.GetAverageMoves() != 41.5 {
		t.Fatalf("stats %v %v", stats, err)
	}
	if len(fake.auth) != 1 || fake.auth[0] != "Bearer tl_ada" {
		t.Fatalf("authorization %q", fake.auth)
	}
	want := []string{"splendor 2026", "player Ann  2026", "stats splendor "}
	if !slices.Equal(fake.asked, want) {
		t.Fatalf("asked %q, want %q", fake.asked, want)
	}
}
