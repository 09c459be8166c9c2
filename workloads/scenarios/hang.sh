# pns-description: never finishes; proves the harness detects a hung guest
# pns-kind: selftest
# pns-duration: 5
sleep 100000
