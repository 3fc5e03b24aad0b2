MemcpyHtoD,0x00007f3000000000,8192
kernel-1.traceg
kernel-2.traceg
