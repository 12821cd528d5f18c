package tablelog

import (
	"context"

	tablelogv1 "github.com/tablelog/tablelog/clients/go/gen/tablelog/v1"
)

// Players lists the club's players: everyone seated in its games and everyone its roster names.
func (c *Client) Players(ctx context.Context) (*tablelogv1.ListPlayersResponse, error) {
	return unary(c, ctx, c.Clubs.ListPlayers, &tablelogv1.ListPlayersRequest{})
}

// MergePlayers joins two names of the same person: merged's names become name's.
func (c *Client) MergePlayers(ctx context.Context, name, merged string) (*tablelogv1.ClubPlayer, error) {
	resp, err := unary(c, ctx, c.Clubs.MergePlayers, &tablelogv1.MergePlayersRequest{Name: name, MergedName: merged})
	return resp.GetPlayer(), err
}

// GetStandings is a game type's league table, overall (season "") or for a season or a year.
func (c *Client) GetStandings(ctx context.Context, game, season string) (*tablelogv1.GetStandingsResponse, error) {
	return unary(c, ctx, c.Standings.GetStandings, &tablelogv1.GetStandingsRequest{Game: game, Season: season})
}

// PlayerRecord is one player's record: standing, rating history, places, head to head.
func (c *Client) PlayerRecord(ctx context.Context, name, game, season string) (*tablelogv1.GetPlayerRecordResponse, error) {
	return unary(c, ctx, c.Standings.GetPlayerRecord, &tablelogv1.GetPlayerRecordRequest{Name: name, Game: game, Season: season})
}

// GameTypeStats is a game type's statistics: win share by seat order, length in moves, the
// statistics' averages; overall (season "") or for a season or a year.
func (c *Client) GameTypeStats(ctx context.Context, game, season string) (*tablelogv1.GetGameTypeStatsResponse, error) {
	return unary(c, ctx, c.Standings.GetGameTypeStats, &tablelogv1.GetGameTypeStatsRequest{Game: game, Season: season})
}
