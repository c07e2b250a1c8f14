package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpgranite/granite/harness/view"
	"github.com/mcpgranite/granite/internal/serve"
)

func runView(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("view", "--results DIR [--results DIR ...] [--addr 127.0.0.1:7860]",
		"Serves a local web page over results folders: the run's progress and scores, every\n"+
			"trial's transcript and explained verdict, and a scenario across the four levels.\n"+
			"Folders still being written update live. It binds to loopback unless --addr says\n"+
			"otherwise, refuses other hosts (see --allow-host) and browser origins as granite serve\n"+
			"does, and with --token (or $GRANITE_TOKEN) requires the token, given once in the\n"+
			"printed address.", stderr)
	var dirs []string
	fs.Func("results", "results folder to show (repeat for shards or runs to compare)", func(s string) error {
		dirs = append(dirs, s)
		return nil
	})
	addr := fs.String("addr", "127.0.0.1:7860", "listen address")
	var o view.Options
	fs.StringVar(&o.Token, "token", "", "token every request must carry (default: $GRANITE_TOKEN)")
	origins := fs.String("allow-origin", "", "browser origins to allow besides loopback ones (comma-separated)")
	hosts := fs.String("allow-host", "", "host names to answer under besides loopback ones and the address dialled (comma-separated)")
	fs.DurationVar(&o.Poll, "poll", 2*time.Second, "how often open pages look for new trials")
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(dirs) == 0 {
		return usagef("no results folder: pass --results DIR (e.g. --results results/smoke after make run)")
	}
	if o.Token == "" {
		o.Token = os.Getenv("GRANITE_TOKEN")
	}
	if *origins != "" {
		o.AllowedOrigins = strings.Split(*origins, ",")
	}
	if *hosts != "" {
		o.AllowedHosts = strings.Split(*hosts, ",")
	}
	v, err := view.New(dirs, o)
	if err != nil {
		return err
	}
	ln, err := serve.Endpoint{Addr: *addr, Token: o.Token}.Listen("view", stderr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: v, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	link := "http://" + ln.Addr().String() + "/"
	if o.Token != "" {
		link += "?token=" + url.QueryEscape(o.Token)
	}
	fmt.Fprintf(stdout, "granite view: %d results folder(s) at %s\n", len(dirs), link)
	if err := serve.UntilDone(ctx, hs, ln); err != nil {
		return err
	}
	return nil
}
