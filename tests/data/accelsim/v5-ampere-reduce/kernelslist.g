MemcpyHtoD,0x00007f2000000000,512
kernel-1.traceg
