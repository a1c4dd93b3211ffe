from remedy.entry import main

main()
