// Command vcsim serves govmomi's vCenter simulator (simulator.VPX) over HTTPS on
// 127.0.0.1 for the vm_ops tests: it prints its SDK URL on one line, then runs until
// killed. With -trace, the SOAP traffic goes to a file (the tests count the mutating
// calls in it). Built by scripts/build-vcsim (GOPATH mode, Debian's govmomi source).
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/vmware/govmomi/simulator"
)

func main() {
	port := flag.Int("port", 0, "TCP port on 127.0.0.1 (0: any free port)")
	user := flag.String("user", "user", "the only user name that may log in")
	pass := flag.String("pass", "pass", "its password")
	trace := flag.String("trace", "", "append every SOAP request and response to this file")
	flag.Parse()

	if *trace != "" {
		f, err := os.OpenFile(*trace, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatalf("vcsim: %v", err)
		}
		simulator.Trace, simulator.TraceFile = true, f
	}

	model := simulator.VPX()
	if err := model.Create(); err != nil {
		log.Fatalf("vcsim: create model: %v", err)
	}
	defer model.Remove()
	// vCenter speaks HTTPS only; a self-signed certificate, like a fresh vCenter.
	model.Service.TLS = new(tls.Config)
	model.Service.Listen = &url.URL{
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)),
		User: url.UserPassword(*user, *pass),
	}
	server := model.Service.NewServer()
	defer server.Close()

	sdk := *server.URL
	sdk.User = nil
	fmt.Println(sdk.String())
	os.Stdout.Sync()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
