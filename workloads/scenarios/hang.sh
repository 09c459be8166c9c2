# pns-description: never finishes; proves the harness detects a hung guest
# pns-duration: 5
sleep 100000
