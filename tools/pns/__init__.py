"""printk-nobkl-stress host harness: kernel tree, build, initramfs, QEMU runs."""
