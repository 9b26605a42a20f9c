module ksched.local/bench/apitool

go 1.22
