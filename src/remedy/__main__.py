from remedy.cli import main

main()
